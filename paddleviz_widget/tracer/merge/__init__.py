"""Pure merging of what was read, captured and parsed into annotations on the walked graph."""
