"""Model backends behind one `Model` protocol."""
