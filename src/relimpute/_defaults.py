"""Defaults named once for the library and the command line (a light module: the CLI's
``--help`` reads it without loading the relevance models)."""

#: the model behind every default answer (``relimpute compare``/``fit``,
#: :func:`relimpute.relevance.load_model`)
DEFAULT_MODEL = "fusion"
