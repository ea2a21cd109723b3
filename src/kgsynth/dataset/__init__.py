"""The dataset files (``splits``): every item as JSONL and Parquet, the public and private
splits and their row order, and the rows read back as items."""

from kgsynth.dataset.splits import item_from_row, read_items

__all__ = ["item_from_row", "read_items"]
