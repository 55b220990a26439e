"""The agent session the machines build: a valid log grown action by action, and what goes wrong in it.

* :mod:`~sessionlog_spec.suite.agent.builder`: :class:`SessionBuilder`, a valid session committed through the model;
* :mod:`~sessionlog_spec.suite.agent.actions`: the one vocabulary of agent actions: when each is legal, and its event;
* :mod:`~sessionlog_spec.suite.agent.loop`: the loop instance writing the session (mode, model, tools, restarts, requests);
* :mod:`~sessionlog_spec.suite.agent.candidates`: invalid candidates, a module per rule group, registered by their builders;
* :mod:`~sessionlog_spec.suite.agent.crashes`: what a crash or a bad disk does to a stored log;
* :mod:`~sessionlog_spec.suite.agent.legacy_forms`: the v0 spellings a legacy log uses.
"""
