"""The analyses ntscope has, each declared once, in its own folder: reports/NAME/analysis.py
holds `ANALYSIS = Analysis(...)`. Everything that lists analyses is derived from here: the
command line (ntscope/cli.py), the report folder's manifest names (common/out_folder.py),
what `analyze` adds to its report set, and the schema tests. ntscope/tests/test_registry.py
fails when a list of analyses is written anywhere else.

An analysis' SQL is sql/NAME/; which of its modules load on every run's connection is said in
the modules' own headers (`-- loaded: with every run`, sql/loader.py), not here."""
import dataclasses
import importlib
import os
import pkgutil

from ntscope.common import out_folder

REPORTS_DIR = os.path.dirname(os.path.abspath(__file__))
SCHEMAS_DIR = os.path.join(REPORTS_DIR, "schemas")


@dataclasses.dataclass(frozen=True)
class Analysis:
    """One analysis.

    name      its folders: sql/NAME/ and reports/NAME/
    summary   one line: what it tells (the command's help, the README's list)
    order     where it comes among the others (the CLI's command list, analyze's steps)
    writes    the files it writes into a report folder (RUN/report or --out)
    schema    True: reports/schemas/NAME.schema.json describes its NAME.json
    command   the subcommand that runs it alone (None: it runs only inside `analyze`); its
              module reports/NAME/command.py has add_arguments(parser) and run(args) -> exit status
    in_analyze  the module (reports/NAME/...) whose add_to_analysis(ctx) adds its part to
              analyze's report set (reports/report/command.py, AnalyzeContext), or None
    """
    name: str
    summary: str
    order: int
    writes: tuple = ()
    schema: bool = False
    command: str = None
    in_analyze: str = None

    def schema_path(self):
        return os.path.join(SCHEMAS_DIR, f"{self.name}.schema.json") if self.schema else None

    def command_module(self):
        return importlib.import_module(f"ntscope.reports.{self.name}.command")

    def analyze_part(self):
        return importlib.import_module(f"ntscope.reports.{self.name}.{self.in_analyze}")


_FOUND = []


def analyses():
    """Every declared analysis, by order (found once: each reports/ subpackage with an analysis.py)."""
    if not _FOUND:
        found = []
        for info in pkgutil.iter_modules([REPORTS_DIR]):
            if info.ispkg and os.path.isfile(os.path.join(REPORTS_DIR, info.name, "analysis.py")):
                decl = importlib.import_module(f"ntscope.reports.{info.name}.analysis").ANALYSIS
                if decl.name != info.name:
                    raise RuntimeError(f"reports/{info.name}/analysis.py declares {decl.name!r}: an analysis is "
                                       "named by its folder")
                found.append(decl)
        _FOUND.extend(sorted(found, key=lambda a: (a.order, a.name)))
        out_folder.register_writer(out_folder.REPORT, report_file_names(_FOUND), commands(_FOUND))
    return list(_FOUND)


def report_file_names(found=None):
    """Every file name an analysis writes into a report folder."""
    return sorted({f for a in (analyses() if found is None else found) for f in a.writes})


def commands(found=None):
    """The subcommands that write a report folder, in order."""
    return [a.command for a in (analyses() if found is None else found) if a.command]


def by_command(command):
    return next(a for a in analyses() if a.command == command)


def in_analyze():
    """The analyses that add a part to analyze's report set, in order."""
    return [a for a in analyses() if a.in_analyze]
