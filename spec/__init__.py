"""sessionlog-spec: the specification of the v1 agent session log, and the suite that checks ports against it.

The folders of the repository install as one import package, so that no generic name (``model``,
``spec``) is put on a user's path:

* ``model/`` is :mod:`sessionlog_spec.model`: the reference model, pure functions over frozen values;
* ``spec/`` is :mod:`sessionlog_spec` itself. Read it in this order:

  - :mod:`sessionlog_spec.registry`: every invariant, with its ID, statement and codes
    (:mod:`sessionlog_spec.catalogue` renders ``invariants.md`` from it);
  - :mod:`sessionlog_spec.contracts`: each invariant as an icontract contract over the model
    (:mod:`sessionlog_spec.crosshair_check` proves the small ones);
  - :mod:`sessionlog_spec.protocol`: the driver protocol ``sessionlog-driver/1`` (``PROTOCOL.md``, its schema,
    the model as a driver);
  - :mod:`sessionlog_spec.suite`: the conformance suite;
  - :mod:`sessionlog_spec.vectors`: language-neutral vectors generated from the model, and their runner.
"""
