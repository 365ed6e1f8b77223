#include "snapshot/mapped_file.h"

#include "common/load_error.h"

#include <algorithm>
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
    struct stat st { };
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

void MappedFile::releaseBefore(size_t offset)
{
    const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    const size_t end = std::min(offset, m_size) / page * page;
    if (!m_data || end <= m_released)
        return;
    ::madvise(const_cast<uint8_t*>(m_data) + m_released, end - m_released, MADV_DONTNEED);
    m_released = end;
}

MappedFile::~MappedFile()
{
    if (m_data)
        ::munmap(const_cast<uint8_t*>(m_data), m_size);
}

} // namespace memscope
