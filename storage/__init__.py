"""groupcoord storage layer."""
