"""Generation from the specification itself: faults derived from the published schemas and the
model's tables, and perturbations of valid events and stored lines, with no hand-written candidate.

:mod:`.schema_faults` breaks every keyword of a payload's published JSON Schema where it applies;
:mod:`.perturb` perturbs whole events (envelope, members, type) and stored lines; the ``fuzz``
group (:mod:`sessionlog_spec.suite.machines.fuzz`) sends both on every path a port declares.
"""
