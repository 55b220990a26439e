"""The driver protocol ``sessionlog-driver/1``: what a port and the suite say to each other.

* ``PROTOCOL.md`` (one folder up): the protocol as a document, every op with an example;
* :mod:`sessionlog_spec.protocol.messages`: the groups and ops, the reply types and the :class:`Port` interface;
* ``schema.json`` and :mod:`sessionlog_spec.protocol.schema`: every request and reply as JSON Schema, and
  the check the suite runs on each message (:mod:`sessionlog_spec.protocol.fastschema` compiles it);
* :mod:`sessionlog_spec.protocol.jsonlines`: one message per line on stdin and stdout;
* :mod:`sessionlog_spec.protocol.model_driver`: the reference model as a driver, the example every port can follow.
"""
