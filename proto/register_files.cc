#include "proto/register_files.h"

#include "compile_lens/v1/capture.pb.h"
#include "compile_lens/v1/report.pb.h"
#include "compile_lens/v1/service.pb.h"
#include "grpc/health/v1/health.pb.h"

namespace cl {

void RegisterProtoFiles() {
  // A message's descriptor() registers its file and the files it imports.
  compile_lens::v1::SessionCapture::descriptor();
  compile_lens::v1::AnalysisReport::descriptor();
  compile_lens::v1::AnalyzeOptions::descriptor();
  grpc::health::v1::HealthCheckRequest::descriptor();
}

}  // namespace cl
