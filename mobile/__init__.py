"""The lightweight numpy-only interpreter: load, verify, plan, arena, invoke; integer kernels.

Planned: nothing here is built yet.
"""
