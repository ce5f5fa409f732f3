"""groupcoord pipeline layer."""
