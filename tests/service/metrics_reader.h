// Reads one series out of a prometheus-cpp Collect(), for the metrics tests.
#ifndef TESTS_SERVICE_METRICS_READER_H_
#define TESTS_SERVICE_METRICS_READER_H_

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "prometheus/metric_family.h"

namespace cl::testing {

class MetricsReader {
 public:
  explicit MetricsReader(std::vector<prometheus::MetricFamily> families)
      : families_(std::move(families)) {}

  // The value of the series `name{labels}` (labels exactly; a histogram gives its count), or
  // nullopt when there is no such series.
  std::optional<double> Get(const std::string& name,
                            const std::map<std::string, std::string>& labels = {}) const {
    for (const prometheus::MetricFamily& family : families_) {
      if (family.name != name) continue;
      for (const prometheus::ClientMetric& metric : family.metric) {
        if (!Matches(metric, labels)) continue;
        switch (family.type) {
          case prometheus::MetricType::Counter:
            return metric.counter.value;
          case prometheus::MetricType::Gauge:
            return metric.gauge.value;
          case prometheus::MetricType::Histogram:
            return static_cast<double>(metric.histogram.sample_count);
          default:
            return std::nullopt;
        }
      }
    }
    return std::nullopt;
  }

  // The number of series of `name`.
  size_t Series(const std::string& name) const {
    for (const prometheus::MetricFamily& family : families_) {
      if (family.name == name) return family.metric.size();
    }
    return 0;
  }

  // The sum of every series of `name` whose labels include `labels`.
  double Sum(const std::string& name, const std::map<std::string, std::string>& labels = {}) const {
    double sum = 0;
    for (const prometheus::MetricFamily& family : families_) {
      if (family.name != name) continue;
      for (const prometheus::ClientMetric& metric : family.metric) {
        bool all = true;
        for (const auto& want : labels) {  // not a structured binding: clang 14 cannot capture one
          all = all && std::any_of(metric.label.begin(), metric.label.end(), [&](const auto& l) {
                  return l.name == want.first && l.value == want.second;
                });
        }
        if (!all) continue;
        sum += family.type == prometheus::MetricType::Histogram
                   ? static_cast<double>(metric.histogram.sample_count)
                   : metric.counter.value;
      }
    }
    return sum;
  }

 private:
  static bool Matches(const prometheus::ClientMetric& metric,
                      const std::map<std::string, std::string>& labels) {
    if (metric.label.size() != labels.size()) return false;
    for (const prometheus::ClientMetric::Label& l : metric.label) {
      auto it = labels.find(l.name);
      if (it == labels.end() || it->second != l.value) return false;
    }
    return true;
  }

  std::vector<prometheus::MetricFamily> families_;
};

}  // namespace cl::testing

#endif  // TESTS_SERVICE_METRICS_READER_H_
