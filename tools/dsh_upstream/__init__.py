"""Measurements of the published upstream package ``@deepseek-ai/dsh-session`` (``ports/dsh-session``).

* ``python -m dsh_upstream.divergences``: every registered invalid candidate against upstream and the model;
  writes ``docs/conformance/dsh-session-divergences.json`` and the replay cases;
* ``python -m dsh_upstream.bench_compare``: the Python port and upstream side by side on the same logs.
"""
