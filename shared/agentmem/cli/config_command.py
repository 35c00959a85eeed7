"""`agentmem config get|set`: a tenant's run-time settings, in its stack's SSM parameter or the data folder.

With --stack the command reads and writes the SSM parameter the stack created
(output `SettingsParameterName`); every function applies a change within its
cache period (60 s), with no redeploy. Without it, `agentmem.toml` in the data
folder; `agentmem serve` reads it when it starts. Either way the value is
validated by the same rules as every setting before anything is written.
"""

from __future__ import annotations

import json
import os
from typing import Any

import click

from agentmem.cli.target import Target, data_target_options, stack_outputs
from agentmem.config import RUNTIME_KEYS, ConfigError, Settings, _snake, runtime_values, with_runtime

KEYS = click.Choice(RUNTIME_KEYS)


@click.group()
def config() -> None:
    """Show or change a tenant's run-time settings (enabledAgents, topK, thresholds...) without a redeploy."""


@config.command(name="get")
@click.argument("key", type=KEYS, required=False)
@data_target_options
def config_get(key: str | None, **target: Any) -> None:
    """Print the run-time settings in force (or only KEY), as JSON."""
    store, chosen = _store(target)
    try:
        stored = store.read()
        values = runtime_values(with_runtime(_base(chosen), stored))
    except ConfigError as exc:
        raise click.ClickException(f"{store.location} holds invalid settings:\n{exc}") from None
    click.echo(json.dumps(values[key] if key else values, indent=2))


@config.command(name="set")
@click.argument("key", type=KEYS)
@click.argument("value")
@data_target_options
def config_set(key: str, value: str, **target: Any) -> None:
    """Set KEY to VALUE (JSON, e.g. 3, 0.4, '{"important": 2}'; enabledAgents also as a,b,c).

    The value is validated first; nothing is written when it is refused.
    """
    store, chosen = _store(target)
    stored = store.read()
    try:
        validated = with_runtime(_base(chosen), {**stored, key: _parse(key, value)})
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from None
    normalized = runtime_values(validated)
    # The parameter holds every key (the stack wrote them all); the file only what a person set.
    store.write(normalized if chosen.stack else {**stored, key: normalized[key]})
    click.echo(f"{key} = {json.dumps(normalized[key])} in {store.location}")
    if chosen.stack:
        click.echo("Every function applies it within 60 s. A deploy that changes this tenant's settings in "
                   "cdk.json writes those again: put lasting changes in cdk.json too.", err=True)
    else:
        variable = f"AGENTMEM_{_snake(key).upper()}"
        if variable in os.environ:
            click.echo(f"note: {variable} is set in this environment and wins over the file", err=True)
        click.echo("`agentmem serve` on this folder applies it when it next starts.", err=True)


def _parse(key: str, text: str) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        value = text
    if key == "enabledAgents" and isinstance(value, str):
        return [part.strip() for part in value.split(",")] if value.strip() else []
    return value


def _store(target: dict[str, Any]) -> tuple[Any, Target]:
    chosen = Target.from_options(target)
    if chosen.stack:
        import boto3

        from agentmem.adapters.aws.ssm_settings import SsmSettingsParameter

        outputs = stack_outputs(chosen.stack, chosen.region)
        if "SettingsParameterName" not in outputs:
            raise click.ClickException(f"stack {chosen.stack} has no SettingsParameterName output (deploy it again)")
        client = boto3.client("ssm", region_name=chosen.region)
        return SsmSettingsParameter(outputs["SettingsParameterName"], client, max_age=0), chosen
    from agentmem.adapters.local.toml_settings import TomlSettingsFile

    return TomlSettingsFile(chosen.data_dir), chosen


def _base(chosen: Target) -> Settings:
    """The settings the stored values apply to: defaults for a stack's parameter; the environment locally."""
    if chosen.stack:
        return Settings.model_validate({})
    from agentmem.config import load_settings

    os.environ["AGENTMEM_DATA_DIR"] = str(chosen.data_dir)
    try:
        # Without the file's run-time keys: those are the values being checked.
        environment = load_settings(data_dir=chosen.data_dir)
    except ConfigError:
        environment = Settings.model_validate({})
    overridden = {k for k in RUNTIME_KEYS if f"AGENTMEM_{_snake(k).upper()}" in os.environ}
    return Settings.model_validate({
        **Settings.model_validate({}).model_dump(),
        **environment.model_dump(include={_snake(k) for k in overridden}),
    })
