#include "snapshot/mapped_file.h"

#include "common/load_error.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace memscope {

MappedFile::MappedFile(const std::string& path)
{
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        throw LoadError(path, -1, {}, std::string("cannot open: ") + std::strerror(errno));
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
        int e = errno;
        ::close(fd);
        throw LoadError(path, -1, {}, std::string("cannot stat: ") + std::strerror(e));
    }
    if (S_ISDIR(st.st_mode)) {
        ::close(fd);
        throw LoadError(path, -1, {}, "is a directory, expected a snapshot file");
    }
    m_size = static_cast<size_t>(st.st_size);
    if (m_size > 0) {
        void* p = ::mmap(nullptr, m_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (p == MAP_FAILED) {
            int e = errno;
            ::close(fd);
            throw LoadError(path, -1, {}, std::string("cannot map: ") + std::strerror(e));
        }
        ::madvise(p, m_size, MADV_SEQUENTIAL);
        m_data = static_cast<const uint8_t*>(p);
    }
    ::close(fd);
}

MappedFile::~MappedFile()
{
    if (m_data)
        ::munmap(const_cast<uint8_t*>(m_data), m_size);
}

} // namespace memscope
