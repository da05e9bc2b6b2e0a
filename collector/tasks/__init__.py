"""Task materialization, a processor from a task's span rows to its task row: tree, attempts, outcome, blame."""
