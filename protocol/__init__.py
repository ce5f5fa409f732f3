"""groupcoord protocol layer."""
