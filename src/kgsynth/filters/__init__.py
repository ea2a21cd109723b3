"""Item filters, one module each behind one interface (built in a later issue)."""
