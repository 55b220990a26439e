"""Generation from the specification itself: faults derived from the published schemas and the
model's tables, and perturbations of valid events and stored lines, with no hand-written candidate.

:mod:`.schema_faults` breaks every keyword of a payload's published JSON Schema where it applies;
:mod:`.perturb` perturbs whole events (envelope, members, type) and stored lines; :mod:`.scenes`
walks the relationship rules' preconditions; :mod:`.pairs` puts two faults the check-order table
orders on one event; :mod:`.legacy_v0` spells logs in the v0 forms of the edge's tables; the ``fuzz``
group (:mod:`sessionlog_spec.suite.machines.fuzz`) sends them all on every path a port declares, and
:mod:`.witness` puts them all to the model alone, for the reach census.
"""
