"""The minimal functional model of the v1 session log.

Pure functions over immutable values: the surface is a tuple of seqs, the request header is the
latest full snapshot, and every rejection is a :class:`~sessionlog_spec.model.violation.Violation` with a stable code.
One concept per module:

* :mod:`sessionlog_spec.model.json_value`: lossless, frozen JSON values;
* :mod:`sessionlog_spec.model.event`: the envelope and the vocabulary;
* :mod:`sessionlog_spec.model.messages`: the three surface message shapes;
* :mod:`sessionlog_spec.model.header`: request-header snapshots, equality, reconstruction, the writer rule;
* :mod:`sessionlog_spec.model.surface`: the surface transition and its fold;
* :mod:`sessionlog_spec.model.trace`: turn / step / tool brackets;
* :mod:`sessionlog_spec.model.compaction`: tool-pairing balance per cut and the legal replacement ranges;
* :mod:`sessionlog_spec.model.session`: the whole contract for one candidate event;
* :mod:`sessionlog_spec.model.repair`: crash repair;
* :mod:`sessionlog_spec.model.jsonl`, :mod:`sessionlog_spec.model.load`: the stored form;
* :mod:`sessionlog_spec.model.legacy`: the v0-to-v1 edge.
"""
