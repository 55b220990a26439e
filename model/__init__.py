"""The minimal functional model of the v1 session log.

Pure functions over immutable values: the surface is a tuple of seqs, the request header is the
latest full snapshot, and every rejection is a :class:`~model.violation.Violation` with a stable code.
One concept per module:

* :mod:`model.json_value`: lossless, frozen JSON values;
* :mod:`model.event`: the envelope and the vocabulary;
* :mod:`model.messages`: the three surface message shapes;
* :mod:`model.header`: request-header snapshots, equality, reconstruction, the writer rule;
* :mod:`model.surface`: the surface transition and its fold;
* :mod:`model.trace`: turn / step / tool brackets;
* :mod:`model.compaction`: tool-pairing balance per cut and the legal replacement ranges;
* :mod:`model.session`: the whole contract for one candidate event;
* :mod:`model.repair`: crash repair;
* :mod:`model.jsonl`, :mod:`model.load`: the stored form;
* :mod:`model.legacy`: the v0-to-v1 edge.
"""
