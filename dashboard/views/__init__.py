"""One module per lesson, named after its page: the blocks that page shows."""
