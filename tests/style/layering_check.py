#!/usr/bin/env python3
"""The layers, written down and kept: every #include from one folder of the project into another, and
every target_link_libraries between their targets, must follow ALLOWED below (README.md "Layout"
draws the same table). A lower layer that includes or links a higher one fails the check, which
names the file, the line and the include or link.

    layering_check.py SOURCE_DIR     check the tree
    layering_check.py --self-test    plant forbidden includes and links in a scratch tree: each must be caught

What it reads: the #include lines of every C++ file under the folders of COMPONENTS
("npuscope/<folder>/..." resolved to the header's file; a quoted relative include to the file it
names) and the target_link_libraries of their CMakeLists.txt. tests/, bench/ and fuzz/ may use every
layer. A new top-level folder with a CMakeLists.txt must be given a place in the table.
"""
import os
import re
import sys
import tempfile

# Which component a file belongs to: the longest matching prefix of its path.
COMPONENTS = {
    "runtime_hooks/": "runtime_hooks",  # the hook API and the vocabulary (header only), NPUSCOPE_CONFIG's parser
    "runtime_hooks/src/inject/": "runtime_hooks/inject",  # the injection library, loaded at run time
    "emulator/": "emulator",
    "opkit/": "opkit",
    "pytorch/": "pytorch",
    "comm/": "comm",  # the workload transport: MPI carrying a C++ workload's collectives
    "calibration/": "calibration",
    "collector/": "collector",  # the trace store
    "importer/": "importer",
    "analyzer/": "analyzer",
    "comparator/": "comparator",
    "viewer/": "viewer",  # the headless library
    "viewer/src/app/": "viewer/app",  # the GUI: Dear ImGui, GLFW, OpenGL
    "viewer/include/npuscope/viewer/viewer_app.h": "viewer/app",
    "tool_scaleout/": "tool_scaleout",  # the tools' scale-out: the interface and the loader of its module
    "tool_scaleout/src/mpi_module.cpp": "tool_scaleout/mpi",  # the module, over MPI
    "cli/": "cli",  # the npuscope program: every command that does not run the emulator
    "cli/src/common/": "cli/common",  # what the program and the emulator commands' module share
    "cli/src/emulator_commands/": "cli/emulator_commands",  # exec, compare, calibrate: a module it loads
    "samples/": "samples",
}
# Targets whose component is not that of the CMakeLists.txt that makes them.
TARGET_COMPONENTS = {
    "npuscope_viewer_app": "viewer/app",
    "npuscope-viewer": "viewer/app",
    "npuscope_tool_scaleout_mpi": "tool_scaleout/mpi",
    "npuscope_cli_common": "cli/common",
    "npuscope_emulator_commands": "cli/emulator_commands",
}
# What each component may include and link, besides itself; what they may use, it may use too.
ALLOWED = {
    "runtime_hooks": [],
    "emulator": ["runtime_hooks"],
    "opkit": ["emulator"],
    "pytorch": ["emulator"],
    "comm": ["emulator"],
    "calibration": ["emulator"],
    "collector": ["runtime_hooks"],
    "runtime_hooks/inject": ["collector"],
    "importer": ["collector"],
    "analyzer": ["collector"],
    "comparator": ["analyzer", "importer", "collector"],  # importer: the msprobe dumps a comparison reads (dump_sides.h)
    "viewer": ["analyzer", "comparator", "collector"],  # comparator: the dump comparison (dump_comparison.h)
    "viewer/app": ["viewer", "analyzer", "comparator", "importer"],  # importer: the dump pairs' steps and ranks
    "tool_scaleout": ["runtime_hooks"],
    "tool_scaleout/mpi": ["tool_scaleout"],
    # The program loads no emulator (Note [Commands that load the emulator] in
    # cli/src/common/emulator_commands.h): the commands that run it or its cost model are the module's.
    "cli/common": ["importer", "analyzer", "collector"],
    "cli": ["cli/common", "viewer", "tool_scaleout"],
    "cli/emulator_commands": ["cli/common", "comparator", "calibration", "emulator"],
    "samples": ["emulator", "opkit", "pytorch", "comm"],
}
# Outside libraries that only some components may include or link: MPI (loaded by the CLI only
# through the tools' MPI module, Note [Tools over MPI]) and the GUI's.
EXTERNAL = [
    ("MPI", re.compile(r"^mpi\.h$"), re.compile(r"^MPI::"), {"comm", "tool_scaleout/mpi"}),
    ("GLFW/OpenGL/ImGui", re.compile(r"^(GLFW/|GL/|imgui|backends/imgui)"),
     re.compile(r"^(PkgConfig::IMGUI|OpenGL::|glfw|imgui)"), {"viewer/app"}),
]
# Folders that may use every layer, and folders that build nothing.
EXEMPT = {"tests", "bench", "fuzz", "cmake", "docs", "scripts"}

HERE = "tests/style/layering_check.py"
SOURCE_SUFFIXES = (".h", ".hpp", ".cpp", ".cc")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
CMAKE_WORDS = {"PUBLIC", "PRIVATE", "INTERFACE", "LINK_PUBLIC", "LINK_PRIVATE", "debug", "optimized", "general"}


def closure():
    """Every component each one may use: its own ALLOWED and theirs."""
    reach = {}

    def visit(c, seen):
        for d in ALLOWED.get(c, []):
            if d not in seen:
                seen.add(d)
                visit(d, seen)
        return seen

    for c in ALLOWED:
        reach[c] = visit(c, set())
    return reach


def component_of(path):
    best = None
    for prefix, c in COMPONENTS.items():
        if (path == prefix or path.startswith(prefix)) and (best is None or len(prefix) > len(best[0])):
            best = (prefix, c)
    return best[1] if best else None


class Checker:
    def __init__(self, root):
        self.root = root
        self.reach = closure()
        self.problems = []
        self.uses = 0

    def may_use(self, user, used):
        return used == user or used in self.reach[user]

    def forbid(self, where, what, user, used):
        allowed = ", ".join(sorted(self.reach[user])) or "nothing"
        self.problems.append(f"{where}: {what}: {user} may not use {used} ({user} may use: {allowed})")

    def check_external(self, where, what, user, name, kind):
        for label, header, link, users in EXTERNAL:
            pattern = header if kind == "include" else link
            if pattern.search(name) and user not in users:
                self.problems.append(f"{where}: {what}: {user} may not use {label} (only {', '.join(sorted(users))})")

    # --- includes
    def included_component(self, source, quote, name):
        m = re.match(r"npuscope/([a-z_]+)/", name)
        if m:
            folder = m.group(1)
            header = f"{folder}/include/{name}"
            if os.path.exists(os.path.join(self.root, header)):
                return component_of(header)
            return component_of(folder + "/") or f"unknown folder '{folder}'"
        if quote == '"':
            resolved = os.path.normpath(os.path.join(os.path.dirname(source), name))
            if not resolved.startswith("..") and os.path.exists(os.path.join(self.root, resolved)):
                return component_of(resolved)
        return None

    def check_includes(self, path):
        user = component_of(path)
        with open(os.path.join(self.root, path), encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                quote, name = m.groups()
                where, what = f"{path}:{number}", f"#include {quote}{name}{'>' if quote == '<' else quote}"
                self.check_external(where, what, user, name, "include")
                used = self.included_component(path, quote, name)
                if used is None:
                    continue
                self.uses += 1
                if used.startswith("unknown"):
                    self.problems.append(f"{where}: {what}: {used}: give it a place in {HERE}")
                elif not self.may_use(user, used):
                    self.forbid(where, what, user, used)

    # --- links
    @staticmethod
    def cmake_calls(text, command):
        """(line number, words) of each call of `command`, comments left out."""
        text = re.sub(r"#[^\n]*", "", text)
        for m in re.finditer(rf"\b{command}\s*\(", text):
            depth, end = 1, m.end()
            while depth and end < len(text):
                depth += {"(": 1, ")": -1}.get(text[end], 0)
                end += 1
            yield text.count("\n", 0, m.start()) + 1, text[m.end():end - 1].split()

    def read_targets(self, cmake_files):
        self.targets, self.aliases = {}, {}
        for path, text in cmake_files:
            # npuscope_folder_library(NAME ...) makes npuscope_NAME and npuscope::NAME (cmake/folder_library.cmake).
            for _, words in self.cmake_calls(text, "npuscope_folder_library"):
                self.targets[f"npuscope_{words[0]}"] = component_of(path)
                self.aliases[f"npuscope::{words[0]}"] = f"npuscope_{words[0]}"
            for command in ("add_library", "add_executable"):
                for _, words in self.cmake_calls(text, command):
                    if not words or "${" in words[0]:
                        continue
                    if len(words) >= 3 and words[1] == "ALIAS":
                        self.aliases[words[0]] = words[2]
                    else:
                        self.targets[words[0]] = TARGET_COMPONENTS.get(words[0], component_of(path))

    def check_links(self, path, text):
        for number, words in self.cmake_calls(text, "target_link_libraries"):
            if not words:
                continue
            target = words[0]
            user = self.targets.get(target) if "${" not in target else None
            user = user or TARGET_COMPONENTS.get(target) or component_of(path)
            for word in words[1:]:
                if word in CMAKE_WORDS or word.startswith("$"):
                    continue
                where, what = f"{path}:{number}", f"target_link_libraries({target} ... {word})"
                self.check_external(where, what, user, word, "link")
                used = self.targets.get(self.aliases.get(word, word))
                if used is None:
                    continue
                self.uses += 1
                if not self.may_use(user, used):
                    self.forbid(where, what, user, used)

    # --- the tree
    def run(self):
        folders = {p.split("/")[0] for p in COMPONENTS}
        for entry in sorted(os.listdir(self.root)):
            if (os.path.isfile(os.path.join(self.root, entry, "CMakeLists.txt")) and entry not in folders
                    and entry not in EXEMPT):
                self.problems.append(f"{entry}/: a folder in no layer: give it a place in {HERE} and README.md")
        sources, cmake_files = [], []
        for folder in sorted(folders):
            for dirpath, _, files in os.walk(os.path.join(self.root, folder)):
                for name in sorted(files):
                    path = os.path.relpath(os.path.join(dirpath, name), self.root)
                    if name.endswith(SOURCE_SUFFIXES):
                        sources.append(path)
                    elif name == "CMakeLists.txt" or name.endswith(".cmake"):
                        with open(os.path.join(self.root, path), encoding="utf-8") as f:
                            cmake_files.append((path, f.read()))
        for path in sources:
            self.check_includes(path)
        self.read_targets(cmake_files)
        for path, text in cmake_files:
            self.check_links(path, text)
        for p in self.problems:
            print(p)
        if self.problems:
            print(f"FAIL: {len(self.problems)} uses the layers forbid (the table: ALLOWED in {HERE})")
            return 1
        print(f"layering_check: {len(sources)} files, {self.uses} includes and links between components: "
              "all follow the table")
        return 0


def self_test():
    """A scratch tree with one forbidden use of each kind: the check must name every one."""
    files = {
        "runtime_hooks/include/npuscope/runtime_hooks/hook_api.h": '#include "npuscope/collector/trace_writer.h"\n',
        "collector/include/npuscope/collector/trace_writer.h": '#include "npuscope/runtime_hooks/hook_api.h"\n',
        "collector/CMakeLists.txt": "npuscope_folder_library(collector STATIC)\n",
        "emulator/src/dispatch.cpp": '#include <vector>\n#include "npuscope/collector/trace_writer.h"\n',
        "emulator/CMakeLists.txt": "add_library(npuscope_emulator SHARED src/dispatch.cpp)\n"
                                   "target_link_libraries(npuscope_emulator PUBLIC  # the store\n"
                                   "  npuscope::collector)\n",
        "cli/src/main.cpp": '#include <mpi.h>\n#include "npuscope/runtime_hooks/hook_api.h"\n',
        "cli/src/run_command.cpp": '#include "npuscope/emulator/runtime.h"\n',
        "cli/src/emulator_commands/exec_command.cpp": '#include "npuscope/emulator/runtime.h"\n',
        "emulator/include/npuscope/emulator/runtime.h": "",
        "cli/CMakeLists.txt": "add_executable(npuscope src/main.cpp)\n"
                              "target_link_libraries(npuscope PRIVATE npuscope::collector MPI::MPI_CXX OpenGL::GL)\n",
        "newfolder/CMakeLists.txt": "",
    }
    expected = [
        "runtime_hooks/include/npuscope/runtime_hooks/hook_api.h:1: #include \"npuscope/collector/trace_writer.h\": "
        "runtime_hooks may not use collector",
        "emulator/src/dispatch.cpp:2: #include \"npuscope/collector/trace_writer.h\": emulator may not use collector",
        "emulator/CMakeLists.txt:2: target_link_libraries(npuscope_emulator ... npuscope::collector): "
        "emulator may not use collector",
        "cli/src/main.cpp:1: #include <mpi.h>: cli may not use MPI",
        "cli/src/run_command.cpp:1: #include \"npuscope/emulator/runtime.h\": cli may not use emulator",
        "cli/CMakeLists.txt:2: target_link_libraries(npuscope ... MPI::MPI_CXX): cli may not use MPI",
        "cli/CMakeLists.txt:2: target_link_libraries(npuscope ... OpenGL::GL): cli may not use GLFW/OpenGL/ImGui",
        "newfolder/: a folder in no layer",
    ]
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as f:
                f.write(text)
        checker = Checker(root)
        status = checker.run()
    missed = [e for e in expected if not any(p.startswith(e) for p in checker.problems)]
    extra = [p for p in checker.problems if not any(p.startswith(e) for e in expected)]
    for e in missed:
        print(f"self-test: not caught: {e}")
    for p in extra:
        print(f"self-test: caught, but not planted: {p}")
    if status == 0 or missed or extra:
        print("FAIL: layering_check.py does not catch exactly what was planted")
        return 1
    print(f"layering_check self-test: the {len(expected)} planted uses were caught")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(Checker(sys.argv[1]).run())
