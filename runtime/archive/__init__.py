"""Topic archive: every record and every committed offset, as Avro container files.

Tansu keeps topics in memory only. The archive makes the embedded broker durable
(restore before the workers start) and gives any broker backups and a history longer
than its retention (``tribal archive`` / ``tribal restore``).
"""

from runtime.archive.restore import RestoreReport, restore_archive
from runtime.archive.store import ArchiveStore
from runtime.archive.writer import ArchiveWriter

__all__ = ["ArchiveStore", "ArchiveWriter", "RestoreReport", "restore_archive"]
