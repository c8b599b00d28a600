"""og.flags and og.app: TF1's tf.flags (absl's flags) and tf.app.run, written without absl.

Flags parse as absl's: "--name=value", "--name value", "-name" as "--name"; booleans take
"--name", "--noname" or "--name=true|false|t|f|1|0" (any case); lists split on commas; multi
flags collect every occurrence; the last of a repeated flag wins; "--" ends the flags, and
other words are positional wherever they stand. As in TF1, FLAGS parses sys.argv the first
time a flag is read, and app.run parses tolerating flags nobody defined (passing them to
main). Bad values and unknown flags raise this module's Error subclasses (ValueErrors) with
absl's messages; app.run prints them as absl does and exits with status 1.
"""

from __future__ import annotations

import sys

from .module_namespace import namespace

__all__ = ["Error", "IllegalFlagValueError", "UnrecognizedFlagError", "DuplicateFlagError",
           "Flag", "FlagValues", "FLAGS", "DEFINE_string", "DEFINE_integer", "DEFINE_float",
           "DEFINE_boolean", "DEFINE_bool", "DEFINE_list", "DEFINE_enum",
           "DEFINE_multi_string", "DEFINE_multi_integer", "mark_flag_as_required",
           "mark_flags_as_required", "usage", "run", "flags_namespace", "app_namespace"]


class Error(ValueError):
    """A flag cannot be defined or parsed (absl's flags.Error)."""


class IllegalFlagValueError(Error):
    """A flag's value cannot be parsed or fails a check (absl's IllegalFlagValueError)."""


class UnrecognizedFlagError(Error):
    """The command line names a flag nobody defined (absl's UnrecognizedFlagError)."""


class DuplicateFlagError(Error):
    """A flag of the same name is defined twice (absl's DuplicateFlagError)."""


_TRUE = ("true", "t", "1")
_FALSE = ("false", "f", "0")


def _parse_bool(text):
    if isinstance(text, bool):
        return text
    if isinstance(text, str):
        if text.lower() in _TRUE:
            return True
        if text.lower() in _FALSE:
            return False
    raise ValueError("Non-boolean argument to boolean flag", text)


def _parse_int(text):
    if isinstance(text, int) and not isinstance(text, bool):
        return text
    text = str(text).strip()
    digits = text.lstrip("+-")
    base = 10
    if len(digits) > 2 and digits[0] == "0" and digits[1] in "xX":
        base = 16
    elif len(digits) > 2 and digits[0] == "0" and digits[1] in "oO":
        base = 8
    return int(text, base)


def _parse_float(text):
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text)
    return float(text)


def _parse_list(text):
    if isinstance(text, (list, tuple)):
        return [str(t) for t in text]
    if not text:
        return []
    return [part.strip() for part in str(text).split(",")]


class Flag:
    """One flag: name, default, help, the parser of its text, and its current value."""

    def __init__(self, name, default, help_text, parser, kind, enum_values=None,
                 multi=False):
        self.name = name
        self.help = help_text
        self.parser = parser
        self.kind = kind
        self.enum_values = enum_values
        self.multi = multi
        self.boolean = kind == "bool"
        self.present = 0
        self.default = None if default is None else self._convert(default, default)
        self.value = self.default

    def _convert(self, text, shown):
        """The parsed value of text; IllegalFlagValueError (absl's message) when bad."""
        try:
            if self.multi:
                items = text if isinstance(text, (list, tuple)) else [text]
                return [self.parser(item) for item in items]
            return self.parser(text)
        except (ValueError, TypeError) as error:
            raise IllegalFlagValueError("flag --%s=%s: %s" % (self.name, shown, error)) from None

    def parse(self, text, first_time: bool):
        """Sets the value from one command-line occurrence (multi flags append, after the
        first occurrence of a parse replaced the default)."""
        value = self._convert(text, text)
        if self.multi:
            self.value = value if first_time else list(self.value or []) + value
        else:
            self.value = value
        self.present += 1

    def help_lines(self) -> str:
        """The flag's entry in the usage text."""
        head = "--[no]%s" % self.name if self.boolean else "--%s" % self.name
        shown = self.default
        if isinstance(shown, list):
            shown = ",".join(str(s) for s in shown)
        if isinstance(shown, bool):
            shown = str(shown).lower()
        out = "  %s: %s\n    (default: %r)" % (head, self.help, "None" if shown is None
                                                 else str(shown))
        if self.enum_values:
            out += "\n    (one of: %s)" % "|".join(self.enum_values)
        return out


class FlagValues:
    """The set of defined flags; attribute access reads a flag's value (parsing sys.argv the
    first time, as TF1's tf.flags.FLAGS). Calling it with an argv parses that list and
    returns [argv[0]] plus the words that are not flags."""

    def __init__(self):
        self.__dict__["_flags"] = {}
        self.__dict__["_parsed"] = False
        self.__dict__["_required"] = []

    # -- definitions ------------------------------------------------------------------------
    def _define(self, flag: Flag) -> Flag:
        if flag.name in self._flags:
            raise DuplicateFlagError("The flag '%s' is defined twice." % flag.name)
        self._flags[flag.name] = flag
        return flag

    def mark_required(self, name):
        """Requires flag `name` to have a value other than None after parsing."""
        if name not in self._flags:
            raise AttributeError("Flag --%s is not defined" % name)
        self._required.append(name)

    # -- access -----------------------------------------------------------------------------
    def __getattr__(self, name):
        flags = self.__dict__["_flags"]
        if name not in flags:
            raise AttributeError(name)
        if not self.__dict__["_parsed"]:
            self(sys.argv)
        return flags[name].value

    def __setattr__(self, name, value):
        if name not in self._flags:
            raise AttributeError("Unknown flag --%s: define it before setting it" % name)
        flag = self._flags[name]
        flag.value = None if value is None else flag._convert(value, value)

    def __getitem__(self, name) -> Flag:
        if name not in self._flags:
            raise KeyError(name)
        return self._flags[name]

    def __contains__(self, name) -> bool:
        return name in self._flags

    def __iter__(self):
        return iter(list(self._flags))

    def __len__(self):
        return len(self._flags)

    def is_parsed(self) -> bool:
        """True once a command line was parsed."""
        return self._parsed

    def mark_as_parsed(self) -> None:
        """Treats the flags as parsed (attribute access no longer reads sys.argv)."""
        self.__dict__["_parsed"] = True

    def unparse_flags(self) -> None:
        """Resets every flag to its default and marks the flags unparsed."""
        for flag in self._flags.values():
            flag.value, flag.present = flag.default, 0
        self.__dict__["_parsed"] = False

    def flag_values_dict(self) -> dict:
        """{name: value} of every flag."""
        return {name: flag.value for name, flag in self._flags.items()}

    def set_default(self, name, value) -> None:
        """Changes a flag's default (and its value when not given on the command line)."""
        flag = self[name]
        flag.default = None if value is None else flag._convert(value, value)
        if not flag.present:
            flag.value = flag.default

    def get_flag_value(self, name, default):
        """The flag's value, or default when no such flag is defined."""
        return self._flags[name].value if name in self._flags else default

    # -- parsing ----------------------------------------------------------------------------
    def __call__(self, argv, known_only: bool = False) -> list:
        """Parses argv (argv[0] is the program); returns [argv[0]] + the non-flag words
        (+ unknown flags when known_only). Raises UnrecognizedFlagError, Error (a missing
        value), IllegalFlagValueError (a bad value or a required flag left None); prints
        usage and raises SystemExit(1) for --help/--helpshort/--helpfull/-?."""
        if isinstance(argv, str) or not hasattr(argv, "__iter__"):
            raise TypeError("argv must be a list of strings, got %r" % (argv,))
        argv = [str(a) for a in argv]
        if not argv:
            raise ValueError("argv cannot be empty: it starts with the program name")
        rest, seen = [argv[0]], set()
        words = argv[1:]
        i = 0
        while i < len(words):
            word = words[i]
            i += 1
            if word == "--":
                rest.extend(words[i:])
                break
            if not word.startswith("-") or word == "-":
                rest.append(word)
                continue
            body = word[2:] if word.startswith("--") else word[1:]
            name, has_value, value = body.partition("=")
            if not name:
                rest.append(word)
                continue
            if name in ("help", "helpshort", "?", "helpfull") and name not in self._flags:
                print(usage_text(self, argv[0]))
                if name != "helpfull":
                    print("\nTry --helpfull to get a list of all flags.")
                raise SystemExit(1)
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and not has_value:
                negated = self._flags.get(name[2:])
                if negated is not None and negated.boolean:
                    negated.parse(False, negated.name not in seen)
                    seen.add(negated.name)
                    continue
            if flag is None:
                if known_only:
                    rest.append(word)
                    continue
                raise UnrecognizedFlagError("Unknown command line flag '%s'" % name)
            if not has_value:
                if flag.boolean:
                    value = "true"
                elif i < len(words):
                    value = words[i]
                    i += 1
                else:
                    raise Error("Missing value for flag %s" % word)
            flag.parse(value, name not in seen)
            seen.add(name)
        self.__dict__["_parsed"] = True
        self._check_required()
        return rest

    def _check_required(self):
        for name in self._required:
            if self._flags[name].value is None:
                raise IllegalFlagValueError(
                    "flag --%s=None: Flag --%s must have a value other than None."
                    % (name, name))


def usage_text(flag_values: FlagValues, program: str) -> str:
    """The usage message: __main__'s docstring (or "USAGE: prog [flags]") and the flags."""
    doc = getattr(sys.modules.get("__main__"), "__doc__", None)
    text = doc if doc else "\nUSAGE: %s [flags]\n" % program
    if doc:
        # as absl: every %s in the docstring names the program, %% is a percent sign
        try:
            text = doc % ((program,) * (doc.count("%") - 2 * doc.count("%%")))
        except (TypeError, ValueError, OverflowError):
            text = doc
    entries = [flag_values[name].help_lines() for name in sorted(flag_values)]
    if entries:
        text += "\nflags:\n" + "\n".join(entries)
    return text


FLAGS = FlagValues()


def _define(name, default, help_text, parser, kind, flag_values, kwargs, enum_values=None,
            multi=False):
    unknown = set(kwargs) - {"required", "module_name"}
    if unknown:
        raise TypeError("unsupported flag arguments %s" % sorted(unknown))
    if not isinstance(name, str) or not name or name.startswith("-") or "=" in name:
        raise Error("A flag name must be a non-empty string without '-' at the start or "
                    "'=', got %r" % (name,))
    if not isinstance(flag_values, FlagValues):
        raise TypeError("flag_values must be a FlagValues, got %r" % (flag_values,))
    flag = flag_values._define(Flag(name, default, help_text, parser, kind, enum_values,
                                    multi))
    if kwargs.get("required"):
        flag_values.mark_required(name)
    return flag


def DEFINE_string(name, default, help, flag_values=FLAGS, **kwargs):  # noqa: A002 - absl's name
    """Defines a string flag; DuplicateFlagError when the name is taken."""
    return _define(name, default, help, str, "string", flag_values, kwargs)


def _bounded(parse_value, lower, upper, form: str):
    """A parser: parse_value(text), refused (absl's "<v> is not >= <bound>") outside
    [lower, upper] (None: unbounded); `form` prints the numbers."""
    def parse(text):
        value = parse_value(text)
        if lower is not None and value < lower:
            raise ValueError(f"{form} is not >= {form}" % (value, lower))
        if upper is not None and value > upper:
            raise ValueError(f"{form} is not <= {form}" % (value, upper))
        return value
    return parse


def DEFINE_integer(name, default, help, lower_bound=None, upper_bound=None,  # noqa: A002
                   flag_values=FLAGS, **kwargs):
    """Defines an int flag (decimal, 0x hex or 0o octal), optionally bounded; raises
    IllegalFlagValueError for a default or value out of bounds."""
    parse = _bounded(_parse_int, lower_bound, upper_bound, "%d")
    return _define(name, default, help, parse, "int", flag_values, kwargs)


def DEFINE_float(name, default, help, lower_bound=None, upper_bound=None,  # noqa: A002
                 flag_values=FLAGS, **kwargs):
    """Defines a float flag, optionally bounded."""
    parse = _bounded(_parse_float, lower_bound, upper_bound, "%s")
    return _define(name, default, help, parse, "float", flag_values, kwargs)


def DEFINE_boolean(name, default, help, flag_values=FLAGS, **kwargs):  # noqa: A002
    """Defines a boolean flag (--name, --noname, --name=true/false/t/f/1/0)."""
    return _define(name, default, help, _parse_bool, "bool", flag_values, kwargs)


DEFINE_bool = DEFINE_boolean


def DEFINE_list(name, default, help, flag_values=FLAGS, **kwargs):  # noqa: A002
    """Defines a comma-separated list of strings flag."""
    return _define(name, default, help, _parse_list, "list", flag_values, kwargs)


def DEFINE_enum(name, default, enum_values, help, flag_values=FLAGS, **kwargs):  # noqa: A002
    """Defines a string flag restricted to enum_values; Error when enum_values is empty."""
    values = list(enum_values or [])
    if not values or not all(isinstance(v, str) for v in values):
        raise Error("enum_values of flag %r must be a non-empty list of strings" % (name,))

    def parse(text):
        if text not in values:
            raise ValueError("value should be one of <%s>" % "|".join(values))
        return text
    return _define(name, default, help, parse, "enum", flag_values, kwargs, enum_values=values)


def DEFINE_multi_string(name, default, help, flag_values=FLAGS, **kwargs):  # noqa: A002
    """Defines a flag collecting every occurrence's string into a list."""
    return _define(name, default, help, str, "multi_string", flag_values, kwargs, multi=True)


def DEFINE_multi_integer(name, default, help, lower_bound=None,  # noqa: A002
                         upper_bound=None, flag_values=FLAGS, **kwargs):
    """Defines a flag collecting every occurrence's int into a list."""
    def parse(text):
        value = _parse_int(text)
        if lower_bound is not None and value < lower_bound:
            raise ValueError("%d is not >= %d" % (value, lower_bound))
        if upper_bound is not None and value > upper_bound:
            raise ValueError("%d is not <= %d" % (value, upper_bound))
        return value
    return _define(name, default, help, parse, "multi_int", flag_values, kwargs, multi=True)


def mark_flag_as_required(flag_name, flag_values=FLAGS):
    """After parsing, flag_name must not be None (else IllegalFlagValueError); raises
    AttributeError when the flag is not defined."""
    flag_values.mark_required(flag_name)


def mark_flags_as_required(flag_names, flag_values=FLAGS):
    """mark_flag_as_required for each name."""
    for name in flag_names:
        flag_values.mark_required(name)


def usage(flag_values=FLAGS, program=None) -> None:
    """Prints the usage message to stdout."""
    print(usage_text(flag_values, program or (sys.argv[0] if sys.argv else "")))


def run(main=None, argv=None):
    """TF1's tf.app.run: parses argv (default sys.argv) into FLAGS, keeping flags nobody
    defined for main, then exits with main(remaining argv)'s result. main defaults to
    __main__.main. A flag error prints absl's "FATAL Flags parsing error" and exits 1."""
    if main is None:
        main = getattr(sys.modules.get("__main__"), "main", None)
    if not callable(main):
        raise TypeError("app.run needs a callable main (or a main() in __main__), got %r"
                        % (main,))
    args = list(sys.argv if argv is None else argv)
    try:
        remaining = FLAGS(args, known_only=True)
    except Error as error:
        sys.stderr.write("FATAL Flags parsing error: %s\n" % error)
        sys.stderr.write("Pass --helpshort or --helpfull to see help on flags.\n")
        sys.exit(1)
    sys.exit(main(remaining))


_FLAG_NAMES = [
    "Error", "IllegalFlagValueError", "UnrecognizedFlagError", "DuplicateFlagError", "Flag",
    "FlagValues", "FLAGS", "DEFINE_string", "DEFINE_integer", "DEFINE_float",
    "DEFINE_boolean", "DEFINE_bool", "DEFINE_list", "DEFINE_enum", "DEFINE_multi_string",
    "DEFINE_multi_integer", "mark_flag_as_required", "mark_flags_as_required"]
flags_namespace = namespace("flags", "TF1's tf.flags (absl's flags API).",
                            {n: globals()[n] for n in _FLAG_NAMES})

app_namespace = namespace("app", "TF1's tf.app.", {"run": run, "usage": usage})
app_namespace.flags = flags_namespace
