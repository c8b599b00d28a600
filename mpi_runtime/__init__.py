"""MPI runtime: cluster roles, placement, partitioning with Send/Recv, replication modes, launcher.

Planned: nothing here is built yet.
"""
