//! Prints a sample agent card and a SendMessage request in their ProtoJSON wire form.

use a2a_runtime::types::{
    AgentCapabilities, AgentCard, AgentInterface, AgentSkill, Message, ProtocolBinding,
    SendMessageRequest,
};

fn main() -> Result<(), serde_json::Error> {
    let card = AgentCard {
        name: "Echo Agent".into(),
        description: "Repeats what you say.".into(),
        supported_interfaces: vec![AgentInterface::new(
            "http://127.0.0.1:8080/",
            ProtocolBinding::JsonRpc,
        )],
        version: "0.1.0".into(),
        capabilities: AgentCapabilities {
            streaming: Some(true),
            ..Default::default()
        },
        default_input_modes: vec!["text/plain".into()],
        default_output_modes: vec!["text/plain".into()],
        skills: vec![AgentSkill {
            id: "echo".into(),
            name: "Echo".into(),
            description: "Echoes the input".into(),
            tags: vec!["echo".into()],
            ..Default::default()
        }],
        ..Default::default()
    };
    println!("{}", serde_json::to_string_pretty(&card)?);
    let request = SendMessageRequest::new(Message::user_text("hello"));
    println!("{}", serde_json::to_string_pretty(&request)?);
    Ok(())
}
