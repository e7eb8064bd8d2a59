"""Publishing to the Hugging Face Hub: a dataset of results, its card, badges, model-card sections.

- :mod:`.publish`: ``benchdb publish`` (plan the files a push adds, then push them in one commit).
- :mod:`.card`: the dataset card and the model-card section (Jinja templates under ``templates/``).
- :mod:`.badges`: shields.io endpoint JSON and a self-contained SVG badge per model.
- :mod:`.client`: the token, the API client, and Hub errors as one-line :class:`BenchdbError` s.

``huggingface_hub`` is imported inside functions: ``import benchdb`` stays light.
"""
