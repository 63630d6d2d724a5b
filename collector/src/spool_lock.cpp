// Spool locks and npuscope run's hold on its spool: Note [Spool ownership] in trace_spool.h.
#include "spool_lock.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "npuscope/collector/trace_spool.h"

namespace npuscope::collector {
namespace spool {

bool lock(int fd, LockByte byte, LockMode mode, bool wait, const std::string& path) {
  struct flock l {};
  l.l_type = mode == LockMode::kShared ? F_RDLCK : F_WRLCK;
  l.l_whence = SEEK_SET;
  l.l_start = static_cast<off_t>(byte);
  l.l_len = 1;
  int rc;
  do {
    rc = ::fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &l);
  } while (rc < 0 && errno == EINTR);
  if (rc == 0) return true;
  if (!wait && (errno == EAGAIN || errno == EACCES)) return false;
  throw TraceError("cannot lock the spool " + path + ": " + std::strerror(errno) +
                   " (its file system does not support open file description locks: keep traces on a local disk)");
}

}  // namespace spool

SpoolOwner::SpoolOwner(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd_ < 0) throw TraceError("cannot create the spool " + path + ": " + std::strerror(errno));
  try {
    spool::lock(fd_, spool::LockByte::kOwner, spool::LockMode::kShared, true, path);
  } catch (...) {
    ::close(fd_);
    ::unlink(path.c_str());
    throw;
  }
}

SpoolOwner::~SpoolOwner() { ::close(fd_); }

}  // namespace npuscope::collector
