"""Alert rules, evaluation, routing, notifiers, incidents and timeline export."""
