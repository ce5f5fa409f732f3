"""KIP-932 share groups: the group side (membership, epochs, the simple assignor, share-partition state
initialisation records), on the same runtime and replay path as classic and consumer groups."""
