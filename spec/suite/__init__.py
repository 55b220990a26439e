"""The conformance suite: Hypothesis state machines that drive a port and hold every reply against the model.

One run (``sessionlog-check check``) goes through, in order:

* :mod:`~sessionlog_spec.suite.commands`: the command line's ``check``, ``replay`` and ``check-log``;
* :mod:`~sessionlog_spec.suite.ports`: the port under test, a subprocess driver or an in-process handler;
* :mod:`~sessionlog_spec.suite.run` and :mod:`~sessionlog_spec.suite.profiles`: one state machine per group, at a search depth;
  under ``--jobs N``, :mod:`~sessionlog_spec.suite.parallel` runs the groups in batches over N processes and merges them;
* :mod:`~sessionlog_spec.suite.machines`: the machines; each step asks :mod:`~sessionlog_spec.suite.oracle` and the port;
* :mod:`~sessionlog_spec.suite.agent`: the agent session the machines build, and the invalid candidates they slip in;
* :mod:`~sessionlog_spec.suite.agreement`: the one rule deciding whether a reply agrees with the model's;
* :mod:`~sessionlog_spec.suite.coverage` and :mod:`~sessionlog_spec.suite.verdict`: what was exercised, and pass or fail;
* :mod:`~sessionlog_spec.suite.output`: the console matrix, JSON and JUnit reports, counterexample files, replay.
"""
