"""Sessions: the on-disk journal of a run."""
