"""Read Nsight Compute reports (``.ncu-rep`` or ``.ncu-rep.xz``) into tidy pandas tables.

Everything goes through NVIDIA's ``ncu_report`` module (PyPI ``ncu-report``), which reads
reports without a GPU. Values are kept in the report's own base units (ns, byte, cycle,
sector, %); nothing is rescaled.

The reader does not raise on broken input by itself: it loads a truncated report as
zero ranges and a corrupted one as a launch with zero metrics. :func:`load_report`
checks for both and raises :class:`~analysis.errors.ReportError`.

Units and metric types depend on what the process asked ``ncu_report`` before (its
native code keeps state between calls and between reports): ``IMetric.unit()`` of some
metrics (``derived__*``, ``breakdown:*``, warp-sampling and source counters) takes the
unit of metrics read earlier, and after a report of another GPU chip ``metric_type()``
and ``unit()`` follow that chip's metric definitions (values do not change). So units
and metric types are read in a process that has asked ``ncu_report`` for none and has
read values of no other chip's report: this one while that holds, else a child forked
per report from a server process of that chip (:func:`_serve_attributes`), in a fixed
order (:func:`_attribute_order`). A process that used ``ncu_report`` itself (imported it
before this package, or called its ``load_report`` other than through
:mod:`analysis.nsight`) gets every unit and type from such a child. docs/robustness.md,
fault 6.
"""

from __future__ import annotations

from analysis.names import REPORT_STEM, ReportName, report_stem  # noqa: F401 (named here too)

from analysis.reports.ncu.files import REPROFILE, _XZ_MAGIC, _plain_report, _xz_decompress_strict  # noqa: F401
from analysis.reports.ncu.isolated import _main, _run_reader, launch_problems, load_report_isolated  # noqa: F401
from analysis.reports.ncu.launches import FAILED_SHARE, IDENTITY_COLUMNS, OPCODE_INSTANCES, TIDY_COLUMNS, _KIND_DOUBLE, _KIND_STRING, _KIND_UINT, _METRIC_TYPE, _actions, _check_named, _dims, _metric_value, _nvtx_names, _open, launch_sizes, precision_from_kernel  # noqa: F401
from analysis.reports.ncu.read import _check_launches, _instance_table, _metric_table, _read, check_report_name, load_instances, load_report  # noqa: F401
from analysis.reports.ncu.units import _AttributeServer, _PROCESS, _PROCESS_LOCK, _Pending, _SERVERS, _SERVERS_PID, _UNSET, _ask, _attribute_child, _attribute_lists, _attribute_order, _attributes, _chip, _close_servers, _note_values, _plan, _read_values, _serve_attributes, _server, _spare_child, _typed_chip  # noqa: F401
