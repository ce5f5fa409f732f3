"""groupcoord coordinator layer."""
