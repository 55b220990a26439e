"""The declared rule space measured: what the model enforces (``sessionlog_spec.suite.rule_space``),
what the generic witness search reaches of it (``sessionlog_spec.suite.fuzz.witness``), and what a
conformance run's JSON report reached (``python -m rule_space [--run REPORT.json] [--json OUT]``)."""
