// The npuscope program links no GUI library (Note [Headless CLI] in cli/src/view_command.cpp), no
// MPI library (Note [Tools over MPI] in npuscope/tool_scaleout/processes.h) and not the emulator
// (Note [Commands that load the emulator] in cli/src/common/emulator_commands.h: exec, compare and
// calibrate load it with their module), and `npuscope view` runs the npuscope-viewer program: its
// exit status and stderr come through, and a viewer that cannot run is a clear error.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_util.h"

using namespace npuscope::testing;
namespace fs = std::filesystem;

namespace {

class HeadlessCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("npuscope_headless_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  // A stand-in viewer: writes its arguments to args.txt, "viewer says no" to stderr, exits 7. (Its
  // argv[0] is the script's path, the kernel's doing; the real viewer's is checked by its messages.)
  std::string fake_viewer() const {
    const std::string script = path("fake-viewer");
    std::ofstream(script) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > " << path("args.txt")
                          << "\necho 'viewer says no' >&2\nexit 7\n";
    fs::permissions(script, fs::perms::owner_all);
    return script;
  }

  fs::path dir_;
};

const char* const kGuiLibraries[] = {"libglfw", "libGL", "libOpenGL", "libGLX", "libEGL", "imgui"};
// OpenMPI's libraries (libmpi brings the other two; hwloc and libevent come from them alone).
const char* const kMpiLibraries[] = {"libmpi", "libopen-rte", "libopen-pal"};

// The emulator and what it brings, which cost every command that links them ~20 ms to start.
const char* const kEmulatorLibraries[] = {"libnpuscope_emulator", "libopenblas", "libonnx", "libprotobuf", "libgomp"};

// What a program or module needs (readelf: its own DT_NEEDED) and loads (ldd: with its libraries'
// own).
struct Linked {
  std::string needed, loaded;
};

Linked linked_by(const std::string& file) {
  const CommandResult needed = run_command("readelf -d --wide " + file);
  EXPECT_EQ(needed.status, 0) << needed.output;
  // What readelf reads is the real list: both link the trace store and the C++ runtime.
  EXPECT_NE(needed.output.find("(NEEDED)             Shared library: [libsqlite3.so.0]"), std::string::npos)
      << needed.output;
  EXPECT_NE(needed.output.find("[libstdc++.so.6]"), std::string::npos) << needed.output;
  const CommandResult loaded = run_command("ldd " + file);
  EXPECT_EQ(loaded.status, 0) << loaded.output;
  EXPECT_NE(loaded.output.find("libsqlite3"), std::string::npos) << loaded.output;
  return {needed.output, loaded.output};
}
Linked linked_by_cli() { return linked_by(NPUSCOPE_CLI); }

}  // namespace

TEST_F(HeadlessCliTest, TheCliLinksNoGuiLibraryDirectlyOrThroughItsLibraries) {
  const Linked cli = linked_by_cli();
  for (const char* gui : kGuiLibraries) {
    EXPECT_EQ(cli.needed.find(gui), std::string::npos) << "npuscope needs " << gui << ":\n" << cli.needed;
    EXPECT_EQ(cli.loaded.find(gui), std::string::npos) << "npuscope loads " << gui << ":\n" << cli.loaded;
  }
}

// MPI is the tools' MPI module's, loaded only under an MPI launcher (Note [Tools over MPI] in
// npuscope/tool_scaleout/processes.h; tests/comm runs `mpirun -np 2 npuscope cluster`).
TEST_F(HeadlessCliTest, TheCliLinksNoMpiLibraryDirectlyOrThroughItsLibraries) {
  const Linked cli = linked_by_cli();
  for (const char* mpi : kMpiLibraries) {
    EXPECT_EQ(cli.needed.find(mpi), std::string::npos) << "npuscope needs " << mpi << ":\n" << cli.needed;
    EXPECT_EQ(cli.loaded.find(mpi), std::string::npos) << "npuscope loads " << mpi << ":\n" << cli.loaded;
  }
}

TEST_F(HeadlessCliTest, TheCliLinksNoEmulatorItsModuleDoesAndExportsItsEntryAlone) {
  const Linked cli = linked_by_cli();
  for (const char* lib : kEmulatorLibraries) {
    EXPECT_EQ(cli.needed.find(lib), std::string::npos) << "npuscope needs " << lib << ":\n" << cli.needed;
    EXPECT_EQ(cli.loaded.find(lib), std::string::npos) << "npuscope loads " << lib << ":\n" << cli.loaded;
  }
  const Linked module = linked_by(NPUSCOPE_EMULATOR_COMMANDS_BUILT);
  EXPECT_NE(module.needed.find("Shared library: [libnpuscope_emulator.so]"), std::string::npos) << module.needed;
  EXPECT_NE(module.loaded.find("libopenblas"), std::string::npos) << module.loaded;
  for (const char* mpi : kMpiLibraries) EXPECT_EQ(module.loaded.find(mpi), std::string::npos) << module.loaded;
  // Of the symbols it defines, ours are the entry alone: the static libraries' stay inside
  // (--exclude-libs), so nothing of the program's can be bound to the module's copies.
  EXPECT_EQ(exported_npuscope_symbols(NPUSCOPE_EMULATOR_COMMANDS_BUILT), "npuscope_emulator_command_v1\n");
}

// exec, compare and calibrate run in the module: their output, usage errors and exit statuses as
// the program's own commands'.
TEST_F(HeadlessCliTest, EmulatorCommandsRunThroughTheModule) {
  const CommandResult help = run_command(npuscope_cmd("exec --help"));
  EXPECT_EQ(help.status, 0) << help.output;
  EXPECT_NE(help.output.find("usage: npuscope exec"), std::string::npos) << help.output;
  const CommandResult usage = run_command(npuscope_cmd("calibrate --no-such-flag"));
  EXPECT_EQ(usage.status, 2) << usage.output;
  EXPECT_NE(usage.output.find("npuscope calibrate: error: "), std::string::npos) << usage.output;
  const CommandResult input = run_command(npuscope_cmd("compare " + path("a.db") + " " + path("b.db")));
  EXPECT_NE(input.status, 0) << input.output;
  EXPECT_NE(input.output.find("npuscope: error: "), std::string::npos) << input.output;
  EXPECT_NE(input.output.find(path("a.db")), std::string::npos) << input.output;
}

TEST_F(HeadlessCliTest, AnEmulatorCommandWithoutItsModuleIsAClearError) {
  const CommandResult missing =
      run_command("NPUSCOPE_EMULATOR_COMMANDS_MODULE=" + path("no-such.so") + " " + npuscope_cmd("exec --help"));
  EXPECT_EQ(missing.status, 1) << missing.output;
  EXPECT_NE(missing.output.find("npuscope: error: npuscope exec needs the emulator commands' module " +
                                path("no-such.so") + ", which cannot be loaded"),
            std::string::npos)
      << missing.output;
  // A library that is not the module (zlib: any library without its entry).
  const CommandResult other =
      run_command("NPUSCOPE_EMULATOR_COMMANDS_MODULE=libz.so.1 " + npuscope_cmd("compare --help"));
  EXPECT_EQ(other.status, 1) << other.output;
  EXPECT_NE(other.output.find("libz.so.1 is not the emulator commands' module of this npuscope"), std::string::npos)
      << other.output;
  // The commands that do not need it never look for it.
  const CommandResult analyze =
      run_command("NPUSCOPE_EMULATOR_COMMANDS_MODULE=" + path("no-such.so") + " " + npuscope_cmd("analyze --help"));
  EXPECT_EQ(analyze.status, 0) << analyze.output;
}

TEST_F(HeadlessCliTest, ViewOfAMissingTraceIsTheViewersErrorUnderTheCliName) {
  // No NPUSCOPE_VIEWER: the npuscope-viewer program this build made.
  const CommandResult r = run_command("env -u NPUSCOPE_VIEWER " +
                                      npuscope_cmd("view " + path("missing.db") + " --screenshot " + path("x.png")));
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: "), std::string::npos) << r.output;
  EXPECT_NE(r.output.find(path("missing.db")), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("npuscope-viewer: error"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("x.png")));
}

TEST_F(HeadlessCliTest, ViewPassesArgumentsStatusAndStderrThroughTheViewerProgram) {
  const std::string viewer = fake_viewer();
  const CommandResult r = run_command("NPUSCOPE_VIEWER=" + viewer + " " +
                                      npuscope_cmd("view " + path("t.db") + " --size 640x480 --panel ops"));
  EXPECT_EQ(r.status, 7) << r.output;
  EXPECT_NE(r.output.find("viewer says no"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(path("args.txt")), path("t.db") + "\n--size\n640x480\n--panel\nops\n");
}

TEST_F(HeadlessCliTest, HelpAndUsageErrorsNeedNoViewer) {
  const std::string no_viewer = "NPUSCOPE_VIEWER=" + path("no-such-viewer") + " ";
  const CommandResult help = run_command(no_viewer + npuscope_cmd("view --help"));
  EXPECT_EQ(help.status, 0) << help.output;
  EXPECT_NE(help.output.find("usage: npuscope view TRACE.db"), std::string::npos) << help.output;
  EXPECT_NE(help.output.find("--screenshot FILE.png"), std::string::npos) << help.output;
  const CommandResult usage = run_command(no_viewer + npuscope_cmd("view " + path("t.db") + " --size 5"));
  EXPECT_EQ(usage.status, 2) << usage.output;
  EXPECT_NE(usage.output.find("npuscope view: error: "), std::string::npos) << usage.output;
}

TEST_F(HeadlessCliTest, AViewerThatCannotRunIsAClearError) {
  const CommandResult r =
      run_command("NPUSCOPE_VIEWER=" + path("no-such-viewer") + " " + npuscope_cmd("view " + path("t.db")));
  EXPECT_EQ(r.status, 1) << r.output;
  EXPECT_NE(r.output.find("npuscope: error: NPUSCOPE_VIEWER is set to '" + path("no-such-viewer") + "'"),
            std::string::npos)
      << r.output;
}
