"""Mutants of the second half (see :func:`killrate.mutants.blind_mutant`)."""

from __future__ import annotations
