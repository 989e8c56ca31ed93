/**
 * Every ZNS error code of docs/zns-platform.md: whether to try again, an English
 * message and the Vietnamese reason shown to people. Generated from the reference table; English
 * texts in the reference's italics are our translations.
 *
 * How to retry: 'backoff' = transient, requeue with exponential backoff; 'refresh_token' = the access
 * token was refused, refresh it once and resend; 'after_night_window' = the template may not be sent
 * 22:00–06:00 Vietnam time, requeue for 06:00; 'never' = the message fails (and is refunded).
 */
export type RetryKind = 'never' | 'backoff' | 'refresh_token' | 'after_night_window';

export interface PlatformError {
  code: number;
  retry: RetryKind;
  message: string;
  reason: string;
}

const CATALOGUE: PlatformError[] = [
  { code: -100, retry: 'backoff', message: "Unknown error", reason: "Xảy ra lỗi không xác định, vui lòng thử lại sau" },
  { code: -101, retry: 'never', message: "Application invalid", reason: "Ứng dụng gửi ZNS không hợp lệ" },
  { code: -102, retry: 'never', message: "Application not existed", reason: "Ứng dụng gửi ZNS không tồn tại" },
  { code: -103, retry: 'never', message: "Application not activated", reason: "Ứng dụng chưa được kích hoạt" },
  { code: -104, retry: 'never', message: "App secret key invalid", reason: "Secret key của ứng dụng không hợp lệ" },
  { code: -105, retry: 'never', message: "Application not link to any OA", reason: "Ứng dụng gửi ZNS chưa đươc liên kết với OA nào" },
  { code: -106, retry: 'never', message: "Method unsupported", reason: "Phương thức không được hỗ trợ" },
  { code: -107, retry: 'never', message: "Message ID invalid", reason: "ID thông báo không hợp lệ" },
  { code: -108, retry: 'never', message: "Phone number invalid", reason: "Số điện thoại không hợp lệ" },
  { code: -109, retry: 'never', message: "Template ID invalid", reason: "ID mẫu ZNS không hợp lệ" },
  { code: -1091, retry: 'never', message: "Template not in REJECT state, or made in the admin tool", reason: "Template không có trạng thái Reject hoặc Template được tạo từ Admin tool" },
  { code: -110, retry: 'never', message: "Zalo version unsupported", reason: "Phiên bản Zalo app không được hỗ trợ. Người dùng cần cập nhật phiên bản mới nhất" },
  { code: -111, retry: 'never', message: "Template data empty", reason: "Mẫu ZNS không có dữ liệu" },
  { code: -112, retry: 'never', message: "Template data invalid", reason: "Nội dung mẫu ZNS không hợp lệ" },
  { code: -1121, retry: 'never', message: "Param exceeds max length", reason: "Dữ liệu tham số vượt quá giới hạn ký tự" },
  { code: -1122, retry: 'never', message: "Missing template param", reason: "Dữ liệu mẫu ZNS thiếu tham số" },
  { code: -1123, retry: 'never', message: "QR code cannot be generated", reason: "Không thể tạo QR code, vui lòng kiểm tra lại" },
  { code: -1124, retry: 'never', message: "Param has wrong format", reason: "Dữ liệu tham số không đúng format" },
  { code: -113, retry: 'never', message: "Button invalid", reason: "Button không hợp lệ" },
  { code: -1131, retry: 'never', message: "Link has invalid format", reason: "Đường dẫn liên kết không đúng định dạng" },
  { code: -114, retry: 'never', message: "User is inactive, or reject the message, or using an outdated Zalo version, or other internal errors", reason: "Người dùng không nhận được ZNS vì các lý do: Trạng thái tài khoản, Tùy chọn nhận ZNS, Sử dụng Zalo phiên bản cũ, hoặc các lỗi nội bộ khác" },
  { code: -115, retry: 'never', message: "Out of quota", reason: "Tài khoản ZNS không đủ số dư" },
  { code: -116, retry: 'never', message: "Text invalid", reason: "Nội dung không hợp lệ" },
  { code: -117, retry: 'never', message: "OA or App does not have permission to access this template", reason: "OA hoặc ứng dụng gửi ZNS chưa được cấp quyền sử dụng mẫu ZNS này" },
  { code: -118, retry: 'never', message: "Zalo account not existed", reason: "Tài khoản Zalo không tồn tại hoặc đã bị vô hiệu hoá" },
  { code: -119, retry: 'never', message: "Account can not receive …", reason: "Tài khoản không thể nhận ZNS" },
  { code: -120, retry: 'never', message: "OA lacks permission for this feature", reason: "OA chưa được cấp quyền sử dụng tính năng này" },
  { code: -1201, retry: 'never', message: "OA may not create tag-3 templates", reason: "OA chưa có quyền tạo template tag 3" },
  { code: -1202, retry: 'never', message: "No permission for media", reason: "OA không có quyền sử dụng media resources (image/logo)" },
  { code: -121, retry: 'never', message: "Template has no content / body empty", reason: "Mẫu ZNS không có nội dung" },
  { code: -122, retry: 'never', message: "Body is not valid JSON", reason: "Body request không đúng định dạng JSON" },
  { code: -123, retry: 'never', message: "RSA decryption failed", reason: "Giải mã nội dung thông báo RSA thất bại" },
  { code: -124, retry: 'refresh_token', message: "Access token invalid", reason: "Mã truy cập không hợp lệ" },
  { code: -1241, retry: 'never', message: "Appsecret_proof invalid", reason: "appsecret_proof không hợp lệ" },
  { code: -125, retry: 'never', message: "Official Account ID invalid", reason: "ID Official Account không hợp lệ" },
  { code: -126, retry: 'never', message: "Dev-mode wallet insufficient", reason: "Ví (development mode) không đủ số dư" },
  { code: -127, retry: 'never', message: "Test template only to admins", reason: "Template test chỉ có thể được gửi cho quản trị viên" },
  { code: -128, retry: 'never', message: "Encoding key missing", reason: "Mã encoding key không tồn tại" },
  { code: -129, retry: 'backoff', message: "Cannot create RSA key", reason: "Không thể tạo RSA key, vui lòng thử lại sau" },
  { code: -130, retry: 'never', message: "Template content over char limit", reason: "Nội dung mẫu ZNS vượt quá giới hạn kí tự" },
  { code: -131, retry: 'never', message: "Template not approved", reason: "Mẫu ZNS chưa được phê duyệt" },
  { code: -132, retry: 'never', message: "Invalid parameter", reason: "Tham số không hợp lệ" },
  { code: -133, retry: 'after_night_window', message: "Template not allowed at night", reason: "Mẫu ZNS này không được phép gửi vào ban đêm (từ 22h-6h)" },
  { code: -134, retry: 'never', message: "User has not answered the opt-in prompt", reason: "Người dùng chưa phản hồi gợi ý nhận ZNS từ OA" },
  { code: -135, retry: 'never', message: "OA not allowed to send ZNS", reason: "OA chưa có quyền gửi ZNS (chưa được xác thực, đang sử dụng gói miễn phí)" },
  { code: -1351, retry: 'never', message: "OA blocked for violations", reason: "OA không có quyền gửi ZNS (Hệ thống chặn do phát hiện vi phạm)" },
  { code: -136, retry: 'never', message: "ZCA link required", reason: "Cần kết nối với ZCA để sử dụng tính năng này" },
  { code: -137, retry: 'never', message: "ZCA payment failed", reason: "Thanh toán ZCA thất bại (ví không đủ số dư, …)" },
  { code: -138, retry: 'never', message: "App lacks permission for this feature", reason: "Ứng dụng gửi ZNS chưa có quyền sử dụng tính năng này" },
  { code: -1381, retry: 'never', message: "OA has not given the Extension ZCA rights", reason: "OA chưa cấp quyền cho Extension về quyền sử dụng ZCA của OA" },
  { code: -139, retry: 'never', message: "User refuses this ZNS type", reason: "Người dùng từ chối nhận loại ZNS này" },
  { code: -140, retry: 'never', message: "OA may not send after-sales ZNS to this user", reason: "OA chưa được cấp quyền gửi ZNS hậu mãi cho người dùng này" },
  { code: -141, retry: 'never', message: "User refuses ZNS from this OA", reason: "Người dùng từ chối nhận ZNS từ Official Account" },
  { code: -142, retry: 'never', message: "No RSA key", reason: "RSA key không tồn tại, vui lòng gọi API tạo RSA key" },
  { code: -143, retry: 'never', message: "RSA key exists", reason: "RSA key đã tồn tại, vui lòng gọi API lấy RSA key" },
  { code: -144, retry: 'never', message: "OA daily quota exceeded", reason: "OA đã vượt giới hạn gửi ZNS trong ngày" },
  { code: -1441, retry: 'never', message: "Monthly promotion quota exceeded", reason: "OA request gửi vượt ngưỡng monthly promotion quota" },
  { code: -145, retry: 'never', message: "OA not allowed this content type", reason: "OA không được phép gửi loại nội dung ZNS này" },
  { code: -146, retry: 'never', message: "Template disabled for low quality", reason: "Mẫu ZNS này đã bị vô hiệu hoá do chất lượng gửi thấp" },
  { code: -147, retry: 'never', message: "Template daily quota exceeded", reason: "Mẫu ZNS đã vượt giới hạn gửi trong ngày" },
  { code: -1471, retry: 'never', message: "Monthly after-sales cap for this user", reason: "OA đã vượt giới hạn gửi tin ZNS hậu mãi cho người dùng này trong tháng." },
  { code: -1472, retry: 'never', message: "Daily promotion cap for this user", reason: "OA đã vượt giới hạn gửi ZNS hậu mãi cho người dùng này trong ngày" },
  { code: -148, retry: 'never', message: "Journey token not found", reason: "Không tìm thấy ZNS journey token" },
  { code: -149, retry: 'never', message: "Journey token invalid", reason: "ZNS journey token không hợp lệ" },
  { code: -1491, retry: 'never', message: "Journey token type incompatible", reason: "ZNS journey token type không tương thích với template" },
  { code: -150, retry: 'never', message: "Journey token expired", reason: "ZNS journey token đã hết hạn" },
  { code: -151, retry: 'never', message: "Not an E2EE template", reason: "Không phải mẫu ZNS E2EE" },
  { code: -152, retry: 'backoff', message: "Fetching the E2EE key failed", reason: "Lấy E2EE key thất bại" },
  { code: -153, retry: 'never', message: "Input data violates rules", reason: "Dữ liệu truyền vào sai quy định" },
  { code: -158, retry: 'never', message: "File too large", reason: "Dung lượng file vượt qua dung lượng cho phép" },
  { code: -159, retry: 'never', message: "File type not allowed", reason: "Định dạng file upload không được cho phép" },
  { code: -160, retry: 'never', message: "Daily quota for create/edit or upload exceeded", reason: "Số lượng tạo/edit template hoặc upload attachment vượt quá daily quota" },
  { code: -161, retry: 'never', message: "Bad sending_mode", reason: "sending_mode truyền sai giá trị cho phép" },
  { code: -162, retry: 'never', message: "Sending_mode 3 not for tag 1/2", reason: "Chế độ Gửi vượt hạn mức (sending_mode = 3) không hỗ trợ để gửi tin tag 1, 2" },
  // Codes a ZNS client may also meet (docs/zns-platform.md, "related codes").
  { code: -32, retry: 'backoff', message: 'App or OA rate limit exceeded', reason: 'Vượt quá giới hạn số lần gọi API, vui lòng thử lại sau' },
  { code: -216, retry: 'refresh_token', message: 'Access token invalid', reason: 'Mã truy cập không hợp lệ' },
  { code: -220, retry: 'refresh_token', message: 'Access token is expired or removed', reason: 'Mã truy cập đã hết hạn hoặc đã bị thu hồi' },
  { code: -201, retry: 'never', message: 'Invalid parameter', reason: 'Tham số không hợp lệ' },
  { code: -249, retry: 'never', message: 'Template cannot be sent by UID', reason: 'Mẫu ZNS không thể gửi qua UID' },
];

/**
 * The gateway's own codes, for failures that never reached the platform (docs/api.md: "a negative
 * code of the service's own"). Kept far from the platform's range.
 */
export const GATEWAY_ERRORS = {
  templateNotEnabled: { code: -9001, retry: 'never', message: 'Template is no longer ENABLE', reason: 'Mẫu ZNS không còn ở trạng thái được phép gửi (ENABLE)' },
  senderAccountDisconnected: { code: -9002, retry: 'never', message: 'Sender account is not connected', reason: 'Tài khoản gửi (OA) chưa được kết nối hoặc đã bị ngắt kết nối' },
  retriesExhausted: { code: -9003, retry: 'never', message: 'Platform unavailable after 5 attempts', reason: 'Không gửi được sau 5 lần thử do nền tảng ZNS không phản hồi' },
  reloginRequired: { code: -9004, retry: 'never', message: 'Sender account must be authorised again', reason: 'Tài khoản gửi (OA) cần được cấp quyền lại' },
  unknownPlatformError: { code: -9005, retry: 'never', message: 'Unknown platform error', reason: 'Nền tảng ZNS trả về lỗi không xác định' },
} as const satisfies Record<string, PlatformError>;

const BY_CODE = new Map<number, PlatformError>([...CATALOGUE, ...Object.values(GATEWAY_ERRORS)].map((entry) => [entry.code, entry]));

/** The catalogue entry of a code; an unknown code is permanent, with the platform's own message. */
export function describePlatformError(code: number, platformMessage?: string): PlatformError {
  return BY_CODE.get(code) ?? { code, retry: 'never', message: platformMessage || `Platform error ${code}`, reason: GATEWAY_ERRORS.unknownPlatformError.reason };
}

export function allPlatformErrors(): readonly PlatformError[] {
  return CATALOGUE;
}
