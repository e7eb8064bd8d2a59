"""Helpers the test modules share: a local Hub, a bisect repository, warehouses built for views and
golden files, the serial lock, the shared export cache. A test module never imports another test
module; what two of them need lives here or in tests/conftest.py (tests/guarantees/test_layout.py
keeps it so)."""
