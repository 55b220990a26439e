"""A measured kill rate for the conformance suite.

:mod:`killrate.mutants` holds mutants of ``seqlog`` (the production Python port): each one
monkeypatches exactly one seqlog function or method with a variant that breaks exactly one
invariant.  ``python -m killrate.driver NAME`` serves the mutated port over the driver protocol,
and ``python -m killrate run`` runs the conformance suite against every mutant (after checking that
the unmutated port passes and that a canary mutant dies) and records which ones it kills.
"""

from __future__ import annotations
