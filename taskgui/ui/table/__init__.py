"""The task table: the model (one row per task), its filtering and sorting proxy, the
texts of its cells, and the countdowns that move with time.
"""
