"""`agentmem demo`: the Brand Voice Audit, the feedback-learning loop end to end."""
