"""Running agentmem on one machine: the HTTP front (API Gateway's part) and the event worker (EventBridge's)."""
