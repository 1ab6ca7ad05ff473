"""The opening book stage: `engine-train book` (training.book.build)."""
