"""Pure text parsers for what Paddle writes: its VLOG, its backward dump, call stacks."""
