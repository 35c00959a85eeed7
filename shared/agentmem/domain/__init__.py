"""The domain: agentmem's rules, free of any infrastructure (no boto3, HTTP or SQL)."""
