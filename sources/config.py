"""``tribal.yaml``: the sources a Tribal installation watches, with ``${ENV}`` secrets.

    sources:
      - kind: postgres
        name: warehouse
        dsn: postgresql://reader:${WAREHOUSE_PASSWORD}@db:5432/warehouse
        install_trigger: true
      - kind: files
        name: tribal
        path: .
      - kind: kb
        name: helpdesk
        url: http://localhost:9000

Values are interpolated from the environment when the file is read; a missing
variable is an error that names it. Secrets never reach logs: :func:`redact` masks
them wherever a config is shown.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SECRET_KEYS = re.compile(r"pass|secret|token|key|dsn|credential", re.IGNORECASE)


class ConfigError(ValueError):
    """The configuration file is missing, malformed, or names an unset variable."""


def interpolate(value: Any, env: dict[str, str] | None = None) -> Any:
    """Replace ``${VAR}`` and ``${VAR:-default}`` in every string of ``value``."""
    env = dict(os.environ) if env is None else env
    if isinstance(value, str):

        def sub(m: re.Match[str]) -> str:
            name, default = m.group(1), m.group(2)
            if name in env:
                return env[name]
            if default is not None:
                return default
            raise ConfigError(f"environment variable {name} is not set (used in tribal.yaml)")

        return _VAR.sub(sub, value)
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    return value


def redact(value: Any, key: str = "") -> Any:
    """A copy safe to log: secret-looking keys masked, passwords in URLs hidden."""
    if isinstance(value, dict):
        return {k: redact(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        value = re.sub(r"(://[^:/@\s]+:)[^@\s]+@", r"\1***@", value)
        if _SECRET_KEYS.search(key) and "://" not in value:
            return "***"
    return value


class SourceConfig(BaseModel):
    """One source entry; kind-specific options stay in the extra fields."""

    model_config = ConfigDict(extra="allow", frozen=True)

    kind: str
    name: str
    enabled: bool = True

    def options(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class TribalConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    sources: tuple[SourceConfig, ...] = Field(default=())


def load_config(path: Path, env: dict[str, str] | None = None) -> TribalConfig:
    """Read and interpolate ``tribal.yaml``."""
    try:
        raw = yaml.safe_load(Path(path).read_text()) or {}
    except FileNotFoundError as exc:
        raise ConfigError(f"{path} does not exist") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise ConfigError(f"{path} must be a mapping with a 'sources' list")
    try:
        return TribalConfig.model_validate(interpolate(raw, env))
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{path}: {exc}") from exc
