"""The tenant's key store: a DynamoDB table holding only users' wrapped data keys.

Erase is crypto-shredding: a user's values are AES-GCM ciphertexts in the tenant table, decryptable
only with the user's data key, which exists wrapped (KMS, tenant key) in this table and nowhere else.
So that a restore of the tenant table (point-in-time recovery, 35 days) cannot bring a key back
next to its ciphertexts, this table is apart from it and is itself never backed up:

- point-in-time recovery off, no stream, no TTL, not in any AWS Backup plan this stack makes
  (keep it out of any plan you add: a backup of this table taken before an erase keeps the
  erased user's key for as long as that backup lives);
- deletion protection on (with `removalPolicy: retain`): deleting the table, or losing it, would make
  every user's vault values unreadable for good; the masked memory (tokens) would survive;
- encrypted with the tenant key; read and written only by the functions that mask, unmask or erase.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from constructs import Construct

from infra.constructs.table import keyed_table
from infra.nag import acknowledge

# What the functions' key store calls make (adapters/aws/dynamodb_keys.py: get, add, destroy a user's
# keys; tests/infra/test_least_privilege.py derives the same list from the code). Re-wrapping (Scan,
# UpdateItem) is `agentmem rewrap`, run by an operator with their own credentials, never by a function.
KEY_TABLE_ACTIONS = (
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:BatchWriteItem",
)


class KeyStoreTable(Construct):
    """The users' wrapped data keys, in a table without point-in-time recovery (see the module docstring)."""

    def __init__(self, scope: Construct, construct_id: str, *, key: kms.IKey, removal_policy: RemovalPolicy) -> None:
        super().__init__(scope, construct_id)
        self.table = keyed_table(self, key=key, removal_policy=removal_policy, point_in_time_recovery=False)
        acknowledge(
            self.table,
            "AwsSolutions-DDB3",
            "Point-in-time recovery is off on purpose: this table holds only users' wrapped data keys, and "
            "erasing a user must leave no restorable copy of their key (crypto-shredding). The data itself "
            "is in the tenant table, which has point-in-time recovery; deletion protection guards this one.",
        )

    def grant(self, role: iam.IGrantable) -> None:
        """Let a function's role use the key store (the key adapter's calls, nothing else)."""
        role.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=list(KEY_TABLE_ACTIONS), resources=[self.table.table_arn])
        )
