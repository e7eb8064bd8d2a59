"""Servers and models for tests, benchmarks and the README's tour, never imported by the library:
a stub OpenAI-compatible server with known timing (:mod:`benchdb.testing.stub`) and a
random-weight tiny LLaMA that ``transformers serve`` can serve (:mod:`benchdb.testing.tiny_llm`)."""
