"""Read side: one named SQL question per function, over the views `spans` and `tasks`."""
