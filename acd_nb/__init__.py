"""Amortized Causal Discovery (Löwe et al., CLeaR 2022) as a literate nbdev library

Modules:

- `acd_nb.core`: Conventions shared by the whole package: tensor shapes, the edge convention, the list of ordered pairs, seeding, device choice, paths, atomic writes and the `ci` / `cpu` / `paper` presets."""

__version__ = "0.0.1"
