"""``config.toml`` beside the identity: your defaults for the options you would
otherwise type every time (docs/playing.md, "Your defaults").

::

    # ~/.config/p2pkoikoi/config.toml (or $P2PKOIKOI_CONFIG_DIR, --config-dir)
    name = "Alice"          # host, join, practice: --name
    rules = "nintendo"      # host, practice: --rules (a preset)
    rounds = 6              # host, practice: --rounds
    deal = "hidden"         # host: --set deal=... (practice always deals open)

An option on the command line wins over the file, the file over the built-in
default.  The file is read with :mod:`tomllib`; a mistake in it (bad TOML, an
unknown key, a value of the wrong kind) stops the command with one line naming
the file and the key, exit status 2, before anything else happens.

Adding a key is one line in :data:`KEYS` (a checker that returns the value or
raises :class:`ValueError` with what it must be); a table of keys for one part
of the program (``[network]``, with keys such as ``stun`` or ``dht``) is a
``"network.stun"`` entry, read back with :meth:`Config.get`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final

from p2pkoikoi.engine.errors import InputError

CONFIG_FILE: Final = "config.toml"
MAX_NAME: Final = 32  # session/wire.py's MAX_NAME (tests/cli/test_config_file.py checks)


class ConfigFileError(InputError):
    """``config.toml`` cannot be used: the message names the file and the key."""


def _name(value: object) -> str:
    if (
        not isinstance(value, str)
        or not value.strip()
        or value != value.strip()
        or len(value) > MAX_NAME
        or not value.isprintable()
    ):
        raise ValueError(f"a string of 1..{MAX_NAME} printable characters, no surrounding spaces")
    return value


def _preset(value: object) -> str:
    from p2pkoikoi.engine.presets import PRESETS

    if not isinstance(value, str) or value not in PRESETS:
        raise ValueError(f"one of the presets {', '.join(PRESETS)}")
    return value


def _rounds(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 99:
        raise ValueError("a whole number from 1 to 99")
    return value


def _deal(value: object) -> str:
    if value not in ("open", "hidden"):
        raise ValueError('"open" or "hidden"')
    return str(value)


#: every key the file may hold ("table.key" for a key in a [table]), and its check
KEYS: Final[Mapping[str, Callable[[object], Any]]] = {
    "name": _name,
    "rules": _preset,
    "rounds": _rounds,
    "deal": _deal,
}


@dataclasses.dataclass(frozen=True, slots=True)
class Config:
    """The checked contents of ``config.toml`` (empty when there is no file)."""

    path: Path | None = None
    values: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def get(self, key: str) -> Any:
        """The value of ``key`` (as in :data:`KEYS`), or None when the file does not set it."""
        return self.values.get(key)

    @property
    def name(self) -> str | None:
        value = self.get("name")
        return value if isinstance(value, str) else None

    @property
    def rules(self) -> str | None:
        value = self.get("rules")
        return value if isinstance(value, str) else None

    @property
    def rounds(self) -> int | None:
        value = self.get("rounds")
        return value if isinstance(value, int) else None

    @property
    def deal(self) -> str | None:
        value = self.get("deal")
        return value if isinstance(value, str) else None


def config_path(config_dir: str | None = None) -> Path:
    """Where ``config.toml`` is: beside the identity (``--config-dir``,
    ``$P2PKOIKOI_CONFIG_DIR``, else ``$XDG_CONFIG_HOME/p2pkoikoi``)."""
    from p2pkoikoi.transport.store.identity import config_dir as identity_dir

    return identity_dir(config_dir or None) / CONFIG_FILE


def _flatten(doc: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in doc.items():
        full = f"{prefix}{key}"
        if isinstance(value, dict) and full not in KEYS:
            out.update(_flatten(value, full + "."))
        else:
            out[full] = value
    return out


def load_config(config_dir: str | None = None) -> Config:
    """The checked ``config.toml`` of ``config_dir``; :class:`ConfigFileError` in one
    line naming the file (and the key) if it cannot be used."""
    import tomllib

    path = config_path(config_dir)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise ConfigFileError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigFileError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(f"{path}: not valid TOML: {exc}") from None
    values: dict[str, Any] = {}
    for key, value in _flatten(doc).items():
        check = KEYS.get(key)
        if check is None:
            raise ConfigFileError(
                f"{path}: unknown key {key!r} (the keys are {', '.join(KEYS)}; see docs/playing.md)"
            )
        try:
            values[key] = check(value)
        except ValueError as exc:
            raise ConfigFileError(f"{path}: {key} must be {exc}, not {value!r}") from None
    return Config(path, values)
