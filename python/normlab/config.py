"""Run configurations from Python: load_config and Config (docs/python.md, "Runs").

    cfg = normlab.load_config("experiments/configs/quickstart.toml", overrides=["train.steps=50"])
    cfg["train.steps"], cfg.model.norm_placement, cfg.to_toml()

The C++ half (_normlab.load_run_config) reads and checks the file exactly as `normlab train` does.
"""
import copy
import os
from typing import Iterator, List, Mapping, Optional, Sequence, Union

from . import _normlab

PathLike = Union[str, "os.PathLike[str]"]


def _parse_toml(text: str) -> dict:
    try:
        import tomllib  # Python >= 3.11
    except ImportError:  # pragma: no cover - older Pythons
        try:
            import tomli as tomllib
        except ImportError as e:
            raise ImportError("reading a Config's keys needs tomllib (Python >= 3.11) or the package tomli "
                              "(pip install tomli); Config.to_toml() works without it") from e
    return tomllib.loads(text)


class Section(Mapping):
    """One section of a Config ([model], [optim], ...), read-only: section["lr"] or section.lr."""

    def __init__(self, name: str, values: dict):
        self._name = name
        self._values = values

    def __getitem__(self, key: str):
        try:
            return self._values[key]
        except KeyError:
            raise KeyError(f"[{self._name}] has no key '{key}'") from None

    def __getattr__(self, key: str):
        if key.startswith("_"):
            raise AttributeError(key)
        try:
            return self._values[key]
        except KeyError:
            raise AttributeError(f"[{self._name}] has no key '{key}'") from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __dir__(self):
        return list(self._values)

    def __repr__(self) -> str:
        return f"Section('{self._name}', {self._values!r})"


class Config:
    """A resolved run configuration (config/run_config.h's RunConfig), from load_config.

    Read-only access, from the resolved TOML (to_toml()):
        config["train.steps"]      one key, "section.key"
        config["train"]            a Section: config["train"]["steps"], config.train.steps
        config.preset              the top-level preset name ("" for none)
        config.to_dict()           {"preset": ..., "model": {...}, "optim": {...}, ...}, a copy
    """

    def __init__(self, run_config, source: str = "", overrides: Sequence[str] = ()):
        self._rc = run_config           # a _normlab.RunConfig
        self._source = source
        self._overrides = list(overrides)
        self._values: Optional[dict] = None

    @property
    def source(self) -> str:
        """The TOML file this config was read from ("" for the defaults)."""
        return self._source

    @property
    def overrides(self) -> List[str]:
        """The overrides applied after the file, in order ("section.key=value")."""
        return list(self._overrides)

    def to_toml(self) -> str:
        """The resolved configuration with every key written, as a run stores it in config.toml."""
        return self._rc.to_toml()

    def fingerprint(self) -> str:
        """The 16-hex-digit hash of what a run with this config computes (a run's fingerprint.txt)."""
        return self._rc.fingerprint()

    def to_dict(self) -> dict:
        """Every key as a nested dict: {"preset": "", "model": {"d_model": 16, ...}, ...} (a copy)."""
        return copy.deepcopy(self._parsed())

    def with_overrides(self, overrides: Sequence[str]) -> "Config":
        """A new Config: this one's source file read again with its overrides, then `overrides` (the same
        checks as load_config; an error names the override)."""
        return load_config(self._source, self._overrides + list(overrides))

    def _parsed(self) -> dict:
        if self._values is None:
            self._values = _parse_toml(self.to_toml())
        return self._values

    def __getitem__(self, key: str):
        values = self._parsed()
        if key in values:
            value = values[key]
            return Section(key, value) if isinstance(value, dict) else value
        section, dot, name = key.partition(".")
        if dot and isinstance(values.get(section), dict):
            return Section(section, values[section])[name]
        raise KeyError(f"no config key or section '{key}' (keys are 'section.key', e.g. 'train.steps')")

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return self[name]
        except KeyError:
            raise AttributeError(f"Config has no section '{name}'") from None

    def __contains__(self, key: str) -> bool:
        try:
            self[key]
            return True
        except KeyError:
            return False

    def __eq__(self, other) -> bool:
        return isinstance(other, Config) and self.to_toml() == other.to_toml()

    def __repr__(self) -> str:
        where = f"'{self._source}'" if self._source else "defaults"
        extra = f", overrides={self._overrides!r}" if self._overrides else ""
        return f"Config({where}{extra})"


def load_config(path: Optional[PathLike] = None, overrides: Sequence[str] = ()) -> Config:
    """Reads a run configuration as `normlab train CONFIG [overrides]` does (config/config.h).

    path: a TOML file (None or "": no file, the defaults); overrides: "section.key=value" strings applied
    after the file, in order (a bare word is a string: "model.norm_placement=post"). Every problem raises
    normlab.Error (a ValueError) with the C++ message, which names where it came from:
    "x.toml:12: [model] unknown key 'norm_placment' (did you mean 'norm_placement'?)",
    "override 'optim.lr=-1': [optim] lr must be > 0, got -1".
    """
    if isinstance(overrides, str):
        raise TypeError("overrides is a list of 'section.key=value' strings, not one string")
    source = "" if path is None else os.fspath(path)
    overrides = [str(o) for o in overrides]
    return Config(_normlab.load_run_config(source, overrides), source, overrides)
